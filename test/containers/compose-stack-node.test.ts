import { describeStack } from './compose-stack';

describeStack('node', 0);
