import { ContentSeenModule } from '@crawler/content-seen';
import { bootstrapService } from '@crawler/runtime';

void bootstrapService('content-seen', ContentSeenModule);
