import { helpersFor, luaScripts, splitLib } from '../../libs/priority-queue/src/stores/redis/scripts';

/** How scripts.ts assembles each script from lib.lua's helpers (no server needed). */
describe('Redis script assembly', () => {
  const lib = (helpers: string) => splitLib(`local BASE = ARGV[1]\n-- helpers: test\n${helpers}`).blocks;

  it('builds the fair share helpers a script uses only under FAIR, declared where lib.lua has them', () => {
    const blocks = lib(
      [
        'local function fmt(n) return string.format("%d", n) end',
        'local function fairHex(tag) return fmt(tag) end',
        'local function fairTagger()',
        '  return { tag = function(p) return fairHex(p) end }',
        'end',
        'local function reprioritize(p)',
        '  if FAIR then return fairTagger().tag(p) end',
        '  return fmt(p)',
        'end',
        '',
      ].join('\n'),
    );
    const out = helpersFor('return reprioritize(1)', blocks);
    expect(out).toBe(
      [
        'local function fmt(n) return string.format("%d", n) end',
        'local fairHex, fairTagger -- fair share helpers: built below only with FAIR (scripts.ts helpersFor)',
        'if FAIR then',
        'fairHex = function(tag) return fmt(tag) end',
        'fairTagger = function()',
        '  return { tag = function(p) return fairHex(p) end }',
        'end',
        'end',
        'local function reprioritize(p)',
        '  if FAIR then return fairTagger().tag(p) end',
        '  return fmt(p)',
        'end',
        '',
        '',
      ].join('\n'),
    );
    // a script that uses none of them gets none
    expect(helpersFor('return fmt(1)', blocks)).toBe('local function fmt(n) return string.format("%d", n) end\n');
  });

  it('refuses fair share helpers that do not stand together in lib.lua (one FAIR block)', () => {
    const blocks = lib(
      ['local function fairHex(tag) return tag end', 'local function fmt(n) return n end', 'local function fairField(p) return fmt(fairHex(p)) end', ''].join('\n'),
    );
    expect(() => helpersFor('return fairField(1)', blocks)).toThrow('fair* helpers must stand together');
  });

  it('no script of the store defines a fair share helper outside its FAIR block', () => {
    for (const script of Object.values(luaScripts())) {
      expect(script.source).not.toMatch(/^local function fair/m);
      const declared = /^local (fair\w+(?:, fair\w+)*) -- fair share helpers/m.exec(script.source);
      if (declared) expect(script.source).toContain(`\nif FAIR then\n${declared[1].split(', ')[0]} = function(`);
    }
    // the hot scripts use some of them
    for (const name of ['create', 'claim_submissions', 'complete_and_claim'] as const) expect(luaScripts()[name].source).toMatch(/^if FAIR then$/m);
  });

  it("create's single-task path returns before the batch's tables and helpers are built (each costs every call)", () => {
    const source = luaScripts().create.source;
    const single = source.indexOf("\nif ARGV[4] == '1' and ARGV[6] == '' then\n");
    expect(single).toBeGreaterThan(0);
    const end = source.indexOf('\nend\n', single);
    expect(source.slice(single, end)).toMatch(/\n {2}return \{ nowS, seq, tags \}$/);
    for (const batchOnly of ['local n = tonumber(ARGV[4])', 'local function idemScopes(', 'local function zaddMany(', 'local function hexTime(', 'local batchScope', 'local byStatus']) {
      expect(source.indexOf(batchOnly)).toBeGreaterThan(end);
    }
  });
});
