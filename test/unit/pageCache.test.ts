import { PageCache } from '../../src/deployments/pageCache';

const versions = (...pairs: string[]) => pairs.join(',');
const body = (text: string) => Buffer.from(text);

describe('the cache of whole revision pages', () => {
  it('answers a page only for exactly the row versions it was made from', () => {
    const cache = new PageCache(10, 1024);
    cache.set('p', versions('a:1', 'b:1'), body('ab'));
    expect(cache.get('p', versions('a:1', 'b:1'))?.toString()).toBe('ab');
    expect(cache.get('p', versions('a:1', 'b:2'))).toBeUndefined(); // a row changed
    expect(cache.get('p', versions('b:1', 'a:1'))).toBeUndefined(); // reordered
    expect(cache.get('p', versions('c:1', 'a:1', 'b:1'))).toBeUndefined(); // a row added
    expect(cache.get('p', versions('a:1'))).toBeUndefined(); // a row gone
    expect(cache.get('q', versions('a:1', 'b:1'))).toBeUndefined(); // other parameters
    cache.set('p', versions('a:1', 'b:2'), body('ab2'));
    expect(cache.get('p', versions('a:1', 'b:1'))).toBeUndefined();
    expect(cache.get('p', versions('a:1', 'b:2'))?.toString()).toBe('ab2');
  });

  it('drops the least recently used page past its count or its bytes', () => {
    const cache = new PageCache(2, 10);
    cache.set('one', versions('a:1'), body('1111'));
    cache.set('two', versions('a:1'), body('2222'));
    expect(cache.get('one', versions('a:1'))).toBeDefined(); // now the most recent
    cache.set('three', versions('a:1'), body('33'));
    expect(cache.get('two', versions('a:1'))).toBeUndefined();
    expect(cache.get('one', versions('a:1'))).toBeDefined(); // 'three' is now the least recent
    cache.set('four', versions('a:1'), body('444444')); // 4 + 2 + 6 bytes are over 10: 'three' goes
    expect(cache.get('three', versions('a:1'))).toBeUndefined();
    expect(cache.get('one', versions('a:1'))).toBeDefined();
    cache.set('huge', versions('a:1'), body('x'.repeat(11)));
    expect(cache.get('huge', versions('a:1'))).toBeUndefined();
    expect(cache.get('four', versions('a:1'))).toBeDefined();
  });
});
