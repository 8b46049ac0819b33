// Does a server answer HTTP/1.1 pipelined requests? Sends `count` copies of
// one GET in a single write on a fresh connection and counts the status lines
// that come back before the connection closes or a timeout. uWebSockets.js
// closes the connection when a request arrives while an earlier response on
// it is still pending (it does not support pipelining with asynchronous
// answers), which is what a service answering from a worker thread does.
import { connect } from 'node:net'

export interface ProbeResult {
  sent: number
  answered: number
  closedByServer: boolean
}

const statusLines = (text: string): number => (text.match(/HTTP\/1\.1 \d{3} /g) ?? []).length

export function probePipelining(url: string, path: string, headers: Readonly<Record<string, string>>, count = 4, timeoutMs = 3000): Promise<ProbeResult> {
  const { hostname, port } = new URL(url)
  const head = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')
  const one = `GET ${path} HTTP/1.1\r\nhost: ${hostname}:${port}\r\n${head}\r\n`
  return new Promise((resolve) => {
    let received = ''
    let closedByServer = false
    const socket = connect(Number(port), hostname, () => socket.write(one.repeat(count)))
    const finish = (): void => {
      clearTimeout(timer)
      socket.destroy()
      resolve({ sent: count, answered: statusLines(received), closedByServer })
    }
    const timer = setTimeout(finish, timeoutMs)
    socket.setEncoding('latin1')
    socket.on('data', (d: string) => {
      received += d
      if (statusLines(received) >= count) setTimeout(finish, 50)
    })
    socket.on('end', () => { closedByServer = true; finish() })
    socket.on('error', () => { closedByServer = true; finish() })
  })
}
