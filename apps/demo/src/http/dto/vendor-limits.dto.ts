import { IsInt, IsNumber, IsOptional } from 'class-validator';

/**
 * A change of a vendor's admission limits; a field left out is unchanged, null removes the
 * limit. Ranges are checked by the library's AdmissionControl (a bad value is a 400).
 */
export class VendorLimitsDto {
  @IsOptional()
  @IsNumber()
  qps?: number | null;

  @IsOptional()
  @IsInt()
  burst?: number | null;

  @IsOptional()
  @IsInt()
  accountConcurrency?: number | null;
}
