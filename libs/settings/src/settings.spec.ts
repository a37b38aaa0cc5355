import { z } from 'zod';
import { envNames, settingFields } from './setting-env';
import { bool, checkedList, isCidr } from './validators';

describe('settings helpers', () => {
  const schema = z.object({
    top: z.string().optional().meta({ env: 'TOP' }),
    group: z.object({
      list: z.array(z.string()).default([]).meta({ env: 'GROUP_LIST', read: 'list' }),
      token: z.string().optional().meta({ env: 'GROUP_TOKEN', secret: true }),
    }),
    checked: z.object({ n: z.number().default(1).meta({ env: 'CHECKED_N' }) }).transform((v) => v),
  });

  it('reads every field that names a variable, nested and refined groups included, in the order declared', () => {
    expect(envNames(schema)).toEqual({ TOP: 'top', GROUP_LIST: 'group.list', GROUP_TOKEN: 'group.token', CHECKED_N: 'checked.n' });
    expect(Object.keys(envNames(schema))).toEqual(['TOP', 'GROUP_LIST', 'GROUP_TOKEN', 'CHECKED_N']);
    expect(settingFields(schema)['group.list']).toEqual({ env: 'GROUP_LIST', read: 'list' });
    expect(settingFields(schema)['group.token'].secret).toBe(true);
  });

  it('reads the spellings of yes and no', () => {
    expect(['true', '1', 'yes', true].map((v) => bool.parse(v))).toEqual([true, true, true, true]);
    expect(['false', '0', 'no', false].map((v) => bool.parse(v))).toEqual([false, false, false, false]);
    expect(bool.safeParse('maybe').success).toBe(false);
  });

  it('takes a CIDR only with a prefix its family allows', () => {
    expect(['10.0.0.0/8', '::1/128', '2606:4700::/32'].every(isCidr)).toBe(true);
    expect(['10.0.0.0/33', '10.0.0.0', 'host/8', '10.0.0.0/8/1'].some(isCidr)).toBe(false);
  });

  it('names every bad entry of a checked list', () => {
    const cidrs = checkedList(isCidr, 'is not a CIDR');
    expect(cidrs.parse(' 10.0.0.0/8 , ::1/128,')).toEqual(['10.0.0.0/8', '::1/128']);
    expect(cidrs.safeParse('10.0.0.0/8,nope,1.2.3.4').error?.issues.map((i) => i.message)).toEqual(['"nope" is not a CIDR', '"1.2.3.4" is not a CIDR']);
  });
});
