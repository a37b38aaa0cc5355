import { describeStack } from './compose-stack';

describeStack('cluster', 1);
