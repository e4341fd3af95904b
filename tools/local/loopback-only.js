// Preloaded (node --require) into a function the local stack serves on this
// machine only: the Functions Framework's CLI listens on every interface and
// has no option for the address, so its server's listen(port) is given the
// loopback address. The console's local access (no sign-in) also refuses any
// peer that is not this machine; this keeps other machines from reaching the
// port at all.
'use strict';
const http = require('node:http');
const listen = http.Server.prototype.listen;
http.Server.prototype.listen = function listenOnLoopback(port, ...rest) {
  if (typeof port === 'number' || (typeof port === 'string' && /^\d+$/.test(port))) {
    return listen.call(this, Number(port), '127.0.0.1', ...rest.filter((arg) => typeof arg === 'function'));
  }
  return listen.call(this, port, ...rest);
};
