import { ControlPlaneModule } from '@crawler/control-plane';
import { bootstrapService } from '@crawler/runtime';

void bootstrapService('control-plane', ControlPlaneModule, { controlApi: true });
