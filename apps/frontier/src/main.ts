import { FrontierModule } from '@crawler/frontier';
import { bootstrapService } from '@crawler/runtime';

void bootstrapService('frontier', FrontierModule);
