import { Inject, Injectable } from '@nestjs/common';
import { DEMO_CONFIG, type DemoConfig } from '../config/demo-config';
import { SimulatedOcrVendor } from './simulated-ocr-vendor';

/** Vendor B: the bulk OCR API. Contract: 20 submits/s, no limit per account. */
@Injectable()
export class VendorB extends SimulatedOcrVendor {
  constructor(@Inject(DEMO_CONFIG) config: DemoConfig) {
    super('vendorB', config.vendors.vendorB);
  }
}
