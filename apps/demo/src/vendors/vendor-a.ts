import { Inject, Injectable } from '@nestjs/common';
import { DEMO_CONFIG, type DemoConfig } from '../config/demo-config';
import { SimulatedOcrVendor } from './simulated-ocr-vendor';

/** Vendor A: the premium OCR API. Contract: 5 submits/s, 2 concurrent jobs per account. */
@Injectable()
export class VendorA extends SimulatedOcrVendor {
  constructor(@Inject(DEMO_CONFIG) config: DemoConfig) {
    super('vendorA', config.vendors.vendorA);
  }
}
