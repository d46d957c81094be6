/**
 * A TCP proxy in front of a real server (Postgres here) that a test can cut and restore: cut,
 * every open connection is reset and every new one refused by a reset, as a server that went
 * away looks to its clients; restored, connections pass through again.
 */
import * as net from "node:net"

export interface TcpProxy {
  readonly port: number
  /** Resets every connection and refuses new ones until `restore`. */
  readonly cut: () => void
  readonly restore: () => void
  /** Connections refused while cut: the clients' attempts to come back. */
  readonly refused: () => number
  readonly close: () => Promise<void>
}

export const startTcpProxy = (target: { readonly host: string; readonly port: number }): Promise<TcpProxy> => {
  const open = new Set<net.Socket>()
  let down = false
  let refused = 0
  const track = (socket: net.Socket) => {
    open.add(socket)
    socket.once("close", () => open.delete(socket))
  }
  const server = net.createServer((client) => {
    if (down) {
      refused++
      client.resetAndDestroy()
      return
    }
    const upstream = net.connect(target.port, target.host)
    track(client)
    track(upstream)
    client.pipe(upstream)
    upstream.pipe(client)
    client.on("error", () => upstream.destroy())
    upstream.on("error", () => client.destroy())
    client.on("close", () => upstream.destroy())
    upstream.on("close", () => client.destroy())
  })
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const address = server.address() as net.AddressInfo
      resolve({
        port: address.port,
        cut: () => {
          down = true
          for (const socket of open) socket.resetAndDestroy()
        },
        restore: () => {
          down = false
        },
        refused: () => refused,
        close: () =>
          new Promise<void>((done) => {
            for (const socket of open) socket.destroy()
            server.close(() => done())
          })
      })
    })
  })
}
