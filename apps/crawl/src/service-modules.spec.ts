import { ConfigError } from '@crawler/config';
import { SERVICE_NAMES } from '@crawler/contracts';
import { FrontierModule } from '@crawler/frontier';
import { UrlSeenModule } from '@crawler/url-seen';
import { parseServiceList, serviceModules } from './service-modules';

describe('service modules', () => {
  it('loads a module per service of the map, all of them by default', () => {
    expect(new Set(serviceModules()).size).toBe(SERVICE_NAMES.length);
    expect(serviceModules(['url-seen', 'frontier'])).toEqual([FrontierModule, UrlSeenModule]);
  });

  it('reads a SERVICES list in the map’s order, refusing unknown names and an empty list', () => {
    expect(parseServiceList(' url-seen, frontier ')).toEqual(['frontier', 'url-seen']);
    expect(() => parseServiceList('frontier,fronteir')).toThrow(ConfigError);
    expect(() => parseServiceList('frontier,fronteir')).toThrow(/SERVICES: no service "fronteir"/);
    expect(() => parseServiceList('')).toThrow(/SERVICES: name the services/);
    expect(() => parseServiceList(undefined)).toThrow(ConfigError);
  });
});
