// Run by `npm run build`: writes GET /openapi.json's document to stdout
// without a server, for the client package's generated types
// (packages/client). The address is the default server's; the types do not
// depend on it.
import { API } from './openapi'

const publicUrl = process.argv[2] ?? 'http://127.0.0.1:8080'
process.stdout.write(`${API.document(publicUrl)}\n`)
