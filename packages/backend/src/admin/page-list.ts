import type { Page } from './types.js';

/**
 * What a list method returns: awaited, one page (`{data, nextCursor}`); iterated with
 * `for await`, every item of every page, fetching the next page as the loop reaches it. Nothing is
 * fetched until it is awaited or iterated.
 */
export class PageList<T> implements PromiseLike<Page<T>>, AsyncIterable<T> {
  private first: Promise<Page<T>> | undefined;

  constructor(
    private readonly fetchPage: (cursor: string | undefined) => Promise<Page<T>>,
    private readonly cursor: string | undefined,
  ) {}

  private firstPage(): Promise<Page<T>> {
    return (this.first ??= this.fetchPage(this.cursor));
  }

  then<A = Page<T>, B = never>(
    onFulfilled?: ((page: Page<T>) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.firstPage().then(onFulfilled, onRejected);
  }

  catch<B = never>(onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<Page<T> | B> {
    return this.firstPage().catch(onRejected);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    let page = await this.firstPage();
    for (;;) {
      yield* page.data;
      if (!page.nextCursor) return;
      page = await this.fetchPage(page.nextCursor);
    }
  }
}
