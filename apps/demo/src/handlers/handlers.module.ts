import { Module } from '@nestjs/common';
import { VendorsModule } from '../vendors/vendors.module';
import { OcrOnVendorAHandler } from './ocr-vendor-a.handler';
import { OcrOnVendorBHandler } from './ocr-vendor-b.handler';
import { ReindexTenantHandler } from './reindex-tenant.handler';

/** The @PriorityTask handlers; the library discovers them at start-up. */
@Module({
  imports: [VendorsModule],
  providers: [OcrOnVendorAHandler, OcrOnVendorBHandler, ReindexTenantHandler],
})
export class HandlersModule {}
