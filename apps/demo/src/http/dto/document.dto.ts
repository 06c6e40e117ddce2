import { IsInt, IsNotEmpty, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

/**
 * One document to OCR. Only these fields are accepted: priority and tenant are decided by the
 * server (forbidNonWhitelisted turns any other field into a 400).
 */
export class DocumentDto {
  @IsString()
  @IsNotEmpty()
  @MaxLength(300)
  name!: string;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(500)
  pages?: number;
}
