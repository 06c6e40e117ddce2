import { IsInt, Max, Min, ValidateIf } from 'class-validator';

/** Fair-share weight of a tenant on the `ocr` queue (1..1000); null = back to the default 1. */
export class TenantWeightDto {
  @ValidateIf((o: TenantWeightDto) => o.weight !== null)
  @IsInt()
  @Min(1)
  @Max(1000)
  weight!: number | null;
}
