import { monitorPlugin } from '@crawler/plugin-monitor';
import { bootstrapPlugin } from '@crawler/plugin-sdk';

void bootstrapPlugin(monitorPlugin);
