import { pngPlugin } from '@crawler/plugin-png';
import { bootstrapPlugin } from '@crawler/plugin-sdk';

void bootstrapPlugin(pngPlugin);
