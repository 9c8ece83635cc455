// A real OpenID provider for the single sign-on tests: npm's oidc-provider
// (the certified Node implementation) with its development sign-in screens,
// where any login name signs in as the account of that name.
//
//   node provider.mjs PORT REDIRECT_URI ACCOUNTS_FILE MODULES
//
// MODULES is the node_modules folder scripts/test-deps installed it in.
// ACCOUNTS_FILE holds {"alice": {"email": ..., "email_verified": true,
// "name": ..., "groups": [...]}, ...}. It is read at every sign-in, so a
// test changes someone's groups by writing the file again. The client is
// `upstate` with the secret `upstate-secret`. Prints "ready" once it listens.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [port, redirectUri, accountsFile, modules] = process.argv.slice(2);
const { default: Provider } = await import(
  pathToFileURL(join(modules, 'oidc-provider', 'lib', 'index.js')).href
);
const accounts = () => JSON.parse(readFileSync(accountsFile, 'utf8'));

const provider = new Provider(`http://127.0.0.1:${port}`, {
  clients: [{
    client_id: 'upstate',
    client_secret: 'upstate-secret',
    redirect_uris: [redirectUri],
    grant_types: ['authorization_code'],
    response_types: ['code'],
  }],
  scopes: ['openid', 'email', 'profile'],
  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: ['name', 'groups'],
  },
  async findAccount(ctx, id) {
    const account = accounts()[id];
    if (!account) return undefined;
    return { accountId: id, claims: async () => ({ sub: id, ...account }) };
  },
  features: { devInteractions: { enabled: true } },
  pkce: { required: () => true },
  // No Google fonts: the test machine reaches nothing outside.
  renderError(ctx, out) {
    ctx.type = 'html';
    ctx.body = `<!DOCTYPE html><title>error</title><pre id="error">${JSON.stringify(out)}</pre>`;
  },
});
provider.proxy = false;

provider.listen(Number(port), '127.0.0.1', () => {
  console.log('ready');
});
