import { once } from 'node:events';
import net from 'node:net';
import { unacknowledgedBytes } from './unacknowledged-bytes.js';

/** A real loopback connection whose client reads nothing until told: the server's view of it. */
async function connection(listen: string, host: string): Promise<{ server: net.Socket; client: net.Socket; close: () => void }> {
  const listener = net.createServer();
  listener.listen(0, listen);
  await once(listener, 'listening');
  const accepted = once(listener, 'connection');
  const client = net.connect((listener.address() as net.AddressInfo).port, host);
  client.pause();
  const [server] = (await accepted) as [net.Socket];
  await once(client, 'connect');
  return {
    server,
    client,
    close: () => {
      client.destroy();
      server.destroy();
      listener.close();
    },
  };
}

/** Writes until the kernel holds more than the client's window: the socket then waits to drain. */
async function fill(socket: net.Socket): Promise<void> {
  const chunk = Buffer.alloc(64 * 1024, 120);
  while (socket.write(chunk));
  // Give the kernel time to send what the window allows.
  await new Promise((resolve) => setTimeout(resolve, 300));
}

const onLinux = process.platform === 'linux' ? describe : describe.skip;

onLinux('unacknowledgedBytes (Linux /proc/net/tcp)', () => {
  // A dual-stack listener (`::`) sees an IPv4 client as ::ffff:127.0.0.1, listed in tcp6.
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['::1', '::1'],
    ['::', '127.0.0.1'],
  ])(
    'counts what a client that reads nothing has not taken, and less once it reads (listening on %s, client to %s)',
    async (listen, host) => {
      const { server, client, close } = await connection(listen, host);
      try {
        expect(await unacknowledgedBytes(server)).toBe(0);
        await fill(server);
        const stalled = await unacknowledgedBytes(server);
        expect(stalled).toBeGreaterThan(0);
        // Nothing read, nothing acknowledged: the count holds still.
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(await unacknowledgedBytes(server)).toBe(stalled);
        client.resume();
        await new Promise((resolve) => setTimeout(resolve, 500));
        expect(await unacknowledgedBytes(server)).toBeLessThan(stalled!);
      } finally {
        close();
      }
    },
  );

  it('is undefined for a socket that is not connected', async () => {
    expect(await unacknowledgedBytes(new net.Socket())).toBeUndefined();
  });
});
