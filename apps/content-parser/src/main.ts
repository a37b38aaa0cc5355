import { ContentParserModule } from '@crawler/content-parser';
import { bootstrapService } from '@crawler/runtime';

void bootstrapService('content-parser', ContentParserModule);
