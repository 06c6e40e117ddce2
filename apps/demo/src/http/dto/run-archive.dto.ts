import { IsInt, IsOptional, Max, Min } from 'class-validator';

export class RunArchiveDto {
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(100_000)
  documentsPerTenant?: number;
}
