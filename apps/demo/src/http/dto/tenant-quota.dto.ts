import { IsInt, ValidateIf } from 'class-validator';

/** Most tasks of a tenant in flight at once; null removes the quota. */
export class TenantQuotaDto {
  @ValidateIf((o: TenantQuotaDto) => o.quota !== null)
  @IsInt()
  quota!: number | null;
}
