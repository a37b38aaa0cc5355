import { checkUrlSeenRoom, UrlSeenModule } from '@crawler/url-seen';
import { bootstrapService } from '@crawler/runtime';

void bootstrapService('url-seen', UrlSeenModule, { startChecks: [checkUrlSeenRoom] });
