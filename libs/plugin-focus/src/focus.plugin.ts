import { ConfigError } from '@crawler/config';
import { definePlugin } from '@crawler/plugin-sdk';
import { FOCUS_CONFIG, FocusConfig } from './focus.config';
import { FocusPluginHandler } from './focus.handler';
import { FocusLearner } from './focus-learner';
import { FocusPrioritizer } from './focus.prioritizer';

/**
 * The focused crawl: with `PLUGINS=focus` and PLUGIN_FOCUS_TERMS, each new page is judged against the topic
 * (the page hook), the learner keeps where links lead to relevant pages, and the frontier fetches first the
 * links found where relevant pages were found before (the prioritizer).
 */
export const focusPlugin = definePlugin<FocusConfig>({
  name: 'focus',
  pageHook: true,
  referrers: true,
  config: FOCUS_CONFIG,
  handler: FocusPluginHandler,
  prioritizer: ({ config, state }) => {
    // Without a topic nothing is ever relevant: the crawl would be breadth-first with extra work.
    if (config.terms.length === 0) throw new ConfigError(['PLUGIN_FOCUS_TERMS: PLUGINS names focus, so it must name the topic (comma-separated terms)']);
    return new FocusPrioritizer(new FocusLearner(state, config.maxPlaces), config);
  },
});
