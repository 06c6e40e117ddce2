import { Injectable } from '@nestjs/common';
import type { VendorName } from '../config/demo-config';
import type { SimulatedOcrVendor } from './simulated-ocr-vendor';
import { VendorA } from './vendor-a';
import { VendorB } from './vendor-b';

/** The vendors by name, for the admin routes. */
@Injectable()
export class VendorDirectory {
  private readonly vendors: Record<VendorName, SimulatedOcrVendor>;

  constructor(a: VendorA, b: VendorB) {
    this.vendors = { vendorA: a, vendorB: b };
  }

  get(name: VendorName): SimulatedOcrVendor {
    return this.vendors[name];
  }

  all(): SimulatedOcrVendor[] {
    return Object.values(this.vendors);
  }
}
