/** What both apps' routers are built with. */
import http from 'node:http';

/**
 * Every method Node's parser accepts, as @koa/router's `methods` option: `allowedMethods()` then answers a method no
 * route of a path has (TRACE, PROPFIND, …) with 405 and an `Allow` header, as for POST on a GET route, instead of
 * @koa/router's 501 "Not Implemented" for methods outside its default list.
 */
export function everyHttpMethod(): string[] {
  return [...http.METHODS];
}
