import { Injectable, NotFoundException, type PipeTransform } from '@nestjs/common';
import { VENDOR_NAMES, type VendorName } from '../config/demo-config';

/** A :vendor path parameter: vendorA or vendorB, else 404. */
@Injectable()
export class VendorNamePipe implements PipeTransform<string, VendorName> {
  transform(value: string): VendorName {
    if (!(VENDOR_NAMES as readonly string[]).includes(value)) {
      throw new NotFoundException(`unknown vendor "${value}"; vendors: ${VENDOR_NAMES.join(', ')}`);
    }
    return value as VendorName;
  }
}
