import { measureMachineCosts } from '../../bench/machine-costs';

describe('measureMachineCosts', () => {
  it('measures a page fault, a read and a round trip to another process, each a plausible time', async () => {
    const costs = await measureMachineCosts();
    // Bounds wide enough for any machine, a hardware one or a slow virtual one: each figure is a real timing.
    expect(costs.pageFaultUs).toBeGreaterThan(0.01);
    expect(costs.pageFaultUs).toBeLessThan(1000);
    expect(costs.readUs).toBeGreaterThan(0.01);
    expect(costs.readUs).toBeLessThan(1000);
    // A round trip crosses two processes' event loops: never cheaper than one read.
    expect(costs.processRoundTripUs).toBeGreaterThan(costs.readUs);
    expect(costs.processRoundTripUs).toBeLessThan(100_000);
  }, 60_000);
});
