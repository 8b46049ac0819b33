# Python's authlib (Debian's python3-authlib), unchanged, against the server:
# RFC 7662 introspection of a live token, RFC 7009 revocation, introspection
# of the dead token. Prints one JSON line for test/http/authlib-introspect.test.ts.
import json
import sys

from authlib.integrations.requests_client import OAuth2Session

issuer, client_id, secret, token = sys.argv[1:5]
session = OAuth2Session(client_id, secret, token_endpoint_auth_method='client_secret_basic')
live = session.introspect_token(issuer + '/introspect', token=token, token_type_hint='access_token')
revoked = session.revoke_token(issuer + '/revoke', token=token, token_type_hint='access_token')
dead = session.introspect_token(issuer + '/introspect', token=token)
print(json.dumps({'live': [live.status_code, live.json()], 'revoke': revoked.status_code, 'dead': [dead.status_code, dead.json()]}))
