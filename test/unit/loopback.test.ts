import { cloudRunProxyRefusal } from '../../functions/src/console/access';
import { isLoopbackHost, localRefusal } from '../../functions/src/http/loopback';

/**
 * The rules of what answers this machine only (the local console and the
 * proxy of `inbox console`): a loopback peer under a loopback name; and
 * the console's refusal of requests through `gcloud run services proxy`.
 */
describe('localRefusal: a loopback peer, under a loopback name', () => {
  test.each([
    ['127.0.0.1', '127.0.0.1:8080', true],
    ['127.8.9.10', 'localhost:8080', true],
    ['::1', '[::1]:8080', true],
    ['::ffff:127.0.0.1', '127.0.0.1:8080', true],
    ['127.0.0.1', 'LOCALHOST:8080', true],
    ['192.168.1.20', '127.0.0.1:8080', false],
    ['::ffff:10.0.0.1', 'localhost:8080', false],
    ['fe80::1', 'localhost', false],
    [undefined, 'localhost', false],
    ['127.0.0.1', 'evil.example:8080', false],
    ['127.0.0.1', 'rebound.example:8080', false],
    ['127.0.0.1', 'localhost.:8080', false],
    ['127.0.0.1', undefined, false],
    ['127.0.0.1', '', false],
    ['127.0.0.1', '127.0.0.1.evil.example', false],
    ['127.0.0.1', 'localhost@evil.example', false],
  ])('peer %s, Host %s: allowed %s', (peer, host, allowed) => {
    expect(localRefusal(peer, host) === null).toBe(allowed);
  });

  test('the reason names the server it is given and what to open', () => {
    expect(localRefusal('127.0.0.1', 'rebound.example:8080', 'inbox console')).toBe(
      'inbox console answers loopback names only (Host "rebound.example:8080"): open http://127.0.0.1:PORT/',
    );
    expect(localRefusal('10.0.0.1', 'localhost:8080')).toContain(
      'the local console answers this machine only (peer 10.0.0.1',
    );
  });

  test.each([['127.0.0.1:1'], ['localhost'], ['[::1]:9']])('isLoopbackHost(%s)', (host) => {
    expect(isLoopbackHost(host)).toBe(true);
  });
});

describe('cloudRunProxyRefusal: what came through `gcloud run services proxy`', () => {
  test.each([
    ['cloud-run-proxy/0.5.0 (linux/amd64)'],
    ['cloud-run-proxy/source (darwin/arm64) Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0'],
    ['Cloud-Run-Proxy/1.0'],
  ])('%s: refused, saying what to run instead', (agent) => {
    const why = cloudRunProxyRefusal(agent);
    expect(why).toContain('gcloud run services proxy');
    expect(why).toContain('rebinds its DNS name');
    expect(why).toContain('inbox console --service inboxconsole --region REGION');
  });

  test.each([
    [undefined],
    [''],
    ['Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0'],
    ['curl/8.5.0 cloud-run-proxy/0.5.0'],
    ['cloud-run-proxyx/1'],
  ])('%s: not refused', (agent) => {
    expect(cloudRunProxyRefusal(agent)).toBeNull();
  });
});
