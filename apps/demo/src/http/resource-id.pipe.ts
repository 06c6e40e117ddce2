import { BadRequestException, Injectable, type PipeTransform } from '@nestjs/common';

const ID = /^[A-Za-z0-9._-]{1,100}$/;

/** A path id: 1-100 letters, digits, dot, dash or underscore. */
@Injectable()
export class ResourceIdPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (!ID.test(value)) throw new BadRequestException(`id must be 1-100 letters, digits, ".", "-" or "_"; got "${value}"`);
    return value;
  }
}
