import { calendarSpans, daysFrom, isCalendarTrap, pathRepeats, pathSegments, queryParamCount, spiderTrap, TrapLimits } from './spider-traps';

const NOW = Date.UTC(2031, 4, 15, 12); // 2031-05-15T12:00Z
const LIMITS: TrapLimits = { maxPathRepeats: 2, calendarWindowDays: 366, maxQueryParams: 12 };

describe('pathSegments', () => {
  it.each([
    ['/', []],
    ['/a/b/', ['a', 'b']],
    ['/a/b', ['a', 'b']],
    ['/a//b', ['a', '', 'b']],
  ])('%s → %j', (path, expected) => expect(pathSegments(path)).toEqual(expected));
});

describe('pathRepeats', () => {
  it.each([
    ['/', 0],
    ['/a', 1],
    ['/a/b/c/d', 1],
    ['/a/a', 2],
    ['/a/a/a', 3],
    ['/a/b/a/b', 2],
    ['/a/b/a/b/a/b', 3],
    ['/a/b/a/b/a/b/', 3],
    ['/x/a/b/c/a/b/c/a/b/c/y', 3],
    ['/a/b/a/b/a', 2], // a/b twice, then half of a third
    ['/a/b/a/c/a/b', 1],
    ['/docs/2020/01/01/post', 2], // 01/01
    ['/p/a/p/a/p/a/p/a', 4],
  ])('%s → %d', (path, expected) => expect(pathRepeats(path)).toBe(expected));

  it('copes with a long path quickly', () => {
    const path = `/${Array.from({ length: 1000 }, (_, i) => `s${i}`).join('/')}`;
    const started = performance.now();
    expect(pathRepeats(path)).toBe(1);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('calendarSpans', () => {
  const texts = (url: string) => calendarSpans(url).map((s) => s.text);

  it.each([
    ['http://e.test/calendar/2031/05', ['2031-05']],
    ['http://e.test/calendar/2031/05/', ['2031-05']],
    ['http://e.test/2031/05/01', ['2031-05-01']],
    ['http://e.test/events/2031-05', ['2031-05']],
    ['http://e.test/events/2031-05-01', ['2031-05-01']],
    ['http://e.test/events/2031-05-01.html', ['2031-05-01']],
    ['http://e.test/cal?year=2031&month=5', ['2031-05']],
    ['http://e.test/cal?year=2031&month=5&day=3', ['2031-05-03']],
    ['http://e.test/cal?y=2031&m=12', ['2031-12']],
    ['http://e.test/cal?year=2031', ['2031']],
    ['http://e.test/cal?date=20310501', ['2031-05-01']],
    ['http://e.test/cal?month=2031-05', ['2031-05']],
    ['http://e.test/cal?view=day&date=2031-05-01', ['2031-05-01']],
    ['http://e.test/cal?from=2031-05-01T10:00:00Z', ['2031-05-01']],
    ['http://e.test/cal?d=2031%2F5%2F1', ['2031-05-01']],
  ])('%s → %j', (url, expected) => expect(texts(url)).toEqual(expected));

  it.each([
    'http://e.test/',
    'http://e.test/2019/05/12/a-post/', // a dated document, not a calendar view
    'http://e.test/events/2031-05-01-concert',
    'http://e.test/item/1999', // a bare year in a path is more often an id
    'http://e.test/p/2031/13', // no month 13
    'http://e.test/p/2031/02/30', // no 30 February
    'http://e.test/cal?month=5', // a month without a year
    'http://e.test/cal?id=20310501', // a number, not a date, under this name
    'http://e.test/cal?year=31',
    'http://e.test/v/1234-56-78',
  ])('finds no date in %s', (url) => expect(calendarSpans(url)).toEqual([]));

  it('gives the interval the date covers', () => {
    const [month] = calendarSpans('http://e.test/2031/02');
    expect(new Date(month.start).toISOString()).toBe('2031-02-01T00:00:00.000Z');
    expect(new Date(month.end).toISOString()).toBe('2031-03-01T00:00:00.000Z');
  });
});

describe('daysFrom and isCalendarTrap', () => {
  it('is 0 inside the span and the distance in days outside it', () => {
    const [may] = calendarSpans('http://e.test/2031/05');
    expect(daysFrom(may, NOW)).toBe(0);
    const [june1] = calendarSpans('http://e.test/2031/06/01');
    expect(daysFrom(june1, NOW)).toBe(16.5);
  });

  it('keeps dates within the window, either way, and drops those beyond', () => {
    expect(isCalendarTrap('http://e.test/calendar/2031/05', 366, NOW)).toBe(false);
    expect(isCalendarTrap('http://e.test/calendar/2032/05', 366, NOW)).toBe(false); // starts 351.5 days ahead
    expect(isCalendarTrap('http://e.test/calendar/2032/06', 366, NOW)).toBe(true);
    expect(isCalendarTrap('http://e.test/calendar/2030/06', 366, NOW)).toBe(false); // ended 318.5 days ago
    expect(isCalendarTrap('http://e.test/calendar/2030/04', 366, NOW)).toBe(true);
    expect(isCalendarTrap('http://e.test/c?view=day&date=2031-06-01', 16, NOW)).toBe(true);
    expect(isCalendarTrap('http://e.test/c?view=day&date=2031-06-01', 17, NOW)).toBe(false);
    expect(isCalendarTrap('http://e.test/c?year=1999', 366, NOW)).toBe(true);
    expect(isCalendarTrap('http://e.test/c?year=2031', 1, NOW)).toBe(false);
    expect(isCalendarTrap('http://e.test/plain/page', 1, NOW)).toBe(false);
  });

  it('is a trap when any of several dates is too far', () => {
    expect(isCalendarTrap('http://e.test/2031/05?date=2040-01-01', 366, NOW)).toBe(true);
  });

  it('uses the clock when no time is given', () => {
    const thisMonth = new Date().toISOString().slice(0, 7).replace('-', '/');
    expect(isCalendarTrap(`http://e.test/calendar/${thisMonth}`, 1)).toBe(false);
    expect(isCalendarTrap('http://e.test/calendar/2999/01', 366)).toBe(true);
  });
});

describe('queryParamCount', () => {
  it.each([
    ['http://e.test/', 0],
    ['http://e.test/?', 0],
    ['http://e.test/?a=1', 1],
    ['http://e.test/?a=1&a=2&b', 3],
    ['http://e.test/?a=1&&b=2', 2],
  ])('%s → %d', (url, n) => expect(queryParamCount(url)).toBe(n));
});

describe('spiderTrap', () => {
  it('names the first sign it sees, or null', () => {
    expect(spiderTrap('http://e.test/a/b/c?x=1', LIMITS, NOW)).toBeNull();
    expect(spiderTrap('http://e.test/a/b/a/b/a/b/', LIMITS, NOW)).toBe('trap.repeated-path');
    expect(spiderTrap('http://e.test/a/a/a', LIMITS, NOW)).toBe('trap.repeated-path');
    expect(spiderTrap('http://e.test/a/b/a/b/', LIMITS, NOW)).toBeNull();
    expect(spiderTrap('http://e.test/calendar/2040/01', LIMITS, NOW)).toBe('trap.calendar');
    const many = Array.from({ length: 13 }, (_, i) => `p${i}=1`).join('&');
    expect(spiderTrap(`http://e.test/?${many}`, LIMITS, NOW)).toBe('too-many-params');
    expect(spiderTrap(`http://e.test/?${many}`, { ...LIMITS, maxQueryParams: 13 }, NOW)).toBeNull();
  });

  it('follows the configured repeat limit', () => {
    expect(spiderTrap('http://e.test/a/a', { ...LIMITS, maxPathRepeats: 1 }, NOW)).toBe('trap.repeated-path');
    expect(spiderTrap('http://e.test/a/a/a', { ...LIMITS, maxPathRepeats: 3 }, NOW)).toBeNull();
  });

  it('finds nothing in an unparseable URL', () => expect(spiderTrap('not a url', LIMITS, NOW)).toBeNull());
});
