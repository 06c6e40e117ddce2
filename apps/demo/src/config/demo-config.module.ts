import { Global, Module, type DynamicModule } from '@nestjs/common';
import { DEMO_CONFIG, type DemoConfig } from './demo-config';

/** Makes the DemoConfig injectable everywhere (@Inject(DEMO_CONFIG)). */
@Global()
@Module({})
export class DemoConfigModule {
  static forRoot(config: DemoConfig): DynamicModule {
    return { module: DemoConfigModule, providers: [{ provide: DEMO_CONFIG, useValue: config }], exports: [DEMO_CONFIG] };
  }
}
