import { focusPlugin } from '@crawler/plugin-focus';
import { bootstrapPlugin } from '@crawler/plugin-sdk';

void bootstrapPlugin(focusPlugin);
