import { IsOptional, IsString, MaxLength } from 'class-validator';

export class ReindexDto {
  @IsOptional()
  @IsString()
  @MaxLength(300)
  reason?: string;
}
