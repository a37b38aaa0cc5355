import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { PolitenessFloor } from '@crawler/crawl-state';
import { LOGGER, Logger } from '@crawler/logging';

/** Publishes the floor this frontier holds, so that the control plane reports overrides as they are in force here. */
@Injectable()
export class PolitenessFloorPublisher implements OnApplicationBootstrap {
  constructor(
    private readonly floor: PolitenessFloor,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    // Not a reason to stop crawling: the control plane then reports by its own settings, as before.
    await this.floor.publish().catch((err) => this.logger.warn({ event: 'politeness-floor-unpublished', err }, 'the politeness floor could not be published'));
  }
}
