import { Module } from '@nestjs/common';
import { DispatchSignal } from './dispatch-signal';
import { FrontierDispatcher } from './frontier-dispatcher.service';
import { FrontierProcessor } from './frontier.processor';
import { FrontierService } from './frontier.service';
import { DefaultPrioritizer, FRONTIER_PRIORITIZER } from './prioritizer';

@Module({
  providers: [
    { provide: FRONTIER_PRIORITIZER, useClass: DefaultPrioritizer },
    DispatchSignal,
    FrontierService,
    FrontierDispatcher,
    FrontierProcessor,
  ],
  exports: [FrontierService],
})
export class FrontierModule {}
