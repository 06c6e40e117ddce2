import { Module } from '@nestjs/common';
import { SimulatedSearchIndexer } from '../search/simulated-search-indexer';
import { VendorA } from './vendor-a';
import { VendorB } from './vendor-b';
import { VendorDirectory } from './vendor-directory';
import { VendorLimitsInitializer } from './vendor-limits.initializer';

/** The simulated external services and the start-up step that writes their limits. */
@Module({
  providers: [VendorA, VendorB, VendorDirectory, SimulatedSearchIndexer, VendorLimitsInitializer],
  exports: [VendorA, VendorB, VendorDirectory, SimulatedSearchIndexer],
})
export class VendorsModule {}
