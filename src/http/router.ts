/** The router both apps are built on. */
import http from 'node:http';
import Router from '@koa/router';

/**
 * A router that knows every method Node's parser accepts, so `allowedMethods()` answers a method no route of a path
 * has (TRACE, PROPFIND, …) with 405 and an `Allow` header, as for POST on a GET route, instead of @koa/router's 501
 * "Not Implemented" for methods outside its default list.
 */
export function routerForEveryMethod(): Router {
  return new Router({ methods: [...http.METHODS] });
}
