import { renderPlugin } from '@crawler/plugin-render';
import { bootstrapPlugin } from '@crawler/plugin-sdk';

void bootstrapPlugin(renderPlugin);
