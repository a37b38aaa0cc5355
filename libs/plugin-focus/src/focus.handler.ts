import { Injectable } from '@nestjs/common';
import { PluginContext, PluginHandler, PluginPage } from '@crawler/plugin-sdk';
import type { FocusConfig } from './focus.config';
import { FocusLearner } from './focus-learner';
import { Relevance } from './focus-relevance';

/**
 * Judges each new page against the topic and teaches the learner: the page's own host and prefix get one
 * more page judged, its referrer's (where its link was found) one more link followed; each one more relevant
 * if the page is; and its own score is kept briefly for the prioritizer, which scores the page's links by it.
 * Counted as `plugin.focus.judged`
 * and `plugin.focus.relevant` in the crawl totals.
 */
@Injectable()
export class FocusPluginHandler implements PluginHandler {
  private readonly relevance: Relevance;
  private readonly learner: FocusLearner;

  constructor(private readonly ctx: PluginContext<FocusConfig>) {
    this.relevance = new Relevance(ctx.config.terms, ctx.config.threshold);
    this.learner = new FocusLearner(ctx.state, ctx.config.maxPlaces);
  }

  async onPage(page: PluginPage): Promise<void> {
    const text = await this.ctx.pageText(page);
    const score = this.relevance.score(`${text.title ?? ''}\n${text.text}`);
    const relevant = this.relevance.isRelevant(score);
    await this.ctx.count('judged');
    if (relevant) {
      await this.ctx.count('relevant');
      this.ctx.logger.debug({ event: 'focus-relevant', url: page.url }, 'relevant page');
    }
    const learned = await this.learner.record(page.url, page.referrer, score);
    // After the counts, so that a prioritizer waiting for this mark reads the page's places with it counted.
    await this.learner.markJudged(page.url, score);
    if (!learned) {
      await this.ctx.count('learner-full');
      this.ctx.logger.warn(
        { event: 'focus-learner-full', url: page.url, referrer: page.referrer, maxPlaces: this.ctx.config.maxPlaces },
        'PLUGIN_FOCUS_MAX_PLACES reached: a new place was not learned',
      );
    }
  }
}
