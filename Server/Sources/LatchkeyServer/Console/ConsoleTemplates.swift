/// The console's Mustache templates, compiled into the binary so that a deployment is one file.
/// Each page's template renders a view from `ConsoleViews`; every form posts its session's form
/// token as `csrf`. No template holds a script: the console works without JavaScript, and its
/// Content-Security-Policy allows none.
enum ConsoleTemplates {
    static let layoutName = "layout"

    /// Every template by name.
    static let all: [(String, String)] = [
        (layoutName, layout), ("sign-in", signIn), ("message", message), ("dashboard", dashboard),
        ("users", users), ("user", user), ("deletions", deletions), ("keys", keys), ("admin-keys", adminKeys),
    ]

    static let layout = """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex">
        <title>{{title}} · Latchkey console</title><link rel="stylesheet" href="/admin/console.css"></head>
        <body>
        <header><span class="brand">Latchkey</span>
        {{#chrome}}<nav>
        <a href="/admin"{{#dashboard}} aria-current="page"{{/dashboard}}>Dashboard</a>
        <a href="/admin/users"{{#users}} aria-current="page"{{/users}}>Users</a>
        <a href="/admin/deletions"{{#deletions}} aria-current="page"{{/deletions}}>Deletion requests</a>
        <a href="/admin/keys"{{#keys}} aria-current="page"{{/keys}}>Signing keys</a>
        <a href="/admin/admin-keys"{{#adminKeys}} aria-current="page"{{/adminKeys}}>Admin keys</a>
        </nav>
        <form method="post" action="/admin/sign-out" class="who"><span>{{keyName}}</span>
        <input type="hidden" name="csrf" value="{{formToken}}"><button type="submit">Sign out</button></form>
        {{/chrome}}</header>
        <main><h1>{{title}}</h1>
        {{{body}}}
        </main></body></html>
        """

    static let signIn = """
        {{#problem}}<p class="error" role="alert">{{problem}}</p>{{/problem}}
        <form method="post" action="/admin/sign-in" class="card">
        <input type="hidden" name="csrf" value="{{formToken}}">
        <label for="key">Admin key</label>
        <input type="password" id="key" name="key" autocomplete="off" required spellcheck="false" placeholder="lka_…">
        <p class="hint">Make one on the server with <code>latchkey admin keys create --name NAME</code>.</p>
        <button type="submit">Sign in</button>
        </form>
        """

    /// A refusal (the navigation is around it).
    static let message = """
        <p class="error" role="alert">{{text}}</p>
        """

    static let dashboard = """
        <p class="hint">Charts: this node, hour by hour, over the last 24 hours (UTC) since it started;
        Prometheus' <code>/metrics</code> has every node. Counts below the charts: the whole database, now.</p>
        <section class="tiles">
        {{#tiles}}<div class="tile"><span class="value">{{value}}</span><span class="label">{{label}}</span></div>{{/tiles}}
        </section>
        {{#charts}}<section class="chart"><h2>{{title}}</h2>{{{svg}}}
        {{#hasLegend}}<ul class="legend">{{#legend}}<li><span class="swatch c{{color}}"></span>{{name}}</li>{{/legend}}</ul>{{/hasLegend}}
        </section>{{/charts}}
        """

    static let users = """
        {{#done}}<p class="ok" role="status">{{done}}</p>{{/done}}
        <form method="get" action="/admin/users" class="search">
        <input type="search" name="query" value="{{query}}" aria-label="Search"
         placeholder="user id, identity subject, email, or name=value">
        <button type="submit">Search</button></form>
        {{#hasUsers}}<table><thead><tr><th>User</th><th>Email</th><th>Identities</th><th>Created (UTC)</th><th></th></tr></thead><tbody>
        {{#users}}<tr><td><a href="{{link}}"><code>{{id}}</code></a></td><td>{{email}}</td>
        <td>{{#identities}}<span class="tag">{{.}}</span> {{/identities}}</td><td>{{created}}</td>
        <td>{{#disabled}}<span class="tag bad">disabled</span>{{/disabled}}{{#guest}}<span class="tag">guest</span>{{/guest}}</td></tr>
        {{/users}}</tbody></table>{{/hasUsers}}
        {{^users}}<p>No user matches.</p>{{/users}}
        {{#next}}<p><a href="{{next}}" rel="next">Next page</a></p>{{/next}}
        """

    static let user = """
        {{#done}}<p class="ok" role="status">{{done}}</p>{{/done}}
        <p>{{#disabled}}<span class="tag bad">disabled</span> {{/disabled}}{{#guest}}<span class="tag">guest</span> {{/guest}}
        Created {{created}}, last changed {{updated}}.</p>
        <div class="actions">
        {{#disabled}}<form method="post" action="{{base}}/enable"><input type="hidden" name="csrf" value="{{formToken}}"><button type="submit">Enable</button></form>{{/disabled}}
        {{^disabled}}<form method="post" action="{{base}}/disable"><input type="hidden" name="csrf" value="{{formToken}}"><button type="submit">Disable (ends every session)</button></form>{{/disabled}}
        <form method="post" action="{{base}}/sessions/end"><input type="hidden" name="csrf" value="{{formToken}}"><button type="submit">End every session</button></form>
        <form method="post" action="{{base}}/factors/reset"><input type="hidden" name="csrf" value="{{formToken}}"><button type="submit">Reset second factors</button></form>
        <form method="post" action="{{base}}/delete" class="danger"><input type="hidden" name="csrf" value="{{formToken}}">
        <label><input type="checkbox" name="confirm" value="yes" required> delete this user</label> <button type="submit">Delete</button></form>
        </div>
        <h2>Identities</h2>
        {{#hasIdentities}}<table><thead><tr><th>Provider</th><th>Subject</th><th>App</th><th>Permissions</th><th>First sign-in</th><th>Last sign-in</th><th></th></tr></thead><tbody>
        {{#identities}}<tr><td>{{provider}}</td><td><code>{{subject}}</code></td><td>{{app}}</td><td>{{permissions}}</td><td>{{first}}</td><td>{{last}}</td>
        <td><form method="post" action="{{unlink}}"><input type="hidden" name="csrf" value="{{formToken}}"><button type="submit">Unlink</button></form></td></tr>
        {{/identities}}</tbody></table>{{/hasIdentities}}
        {{^identities}}<p>None: a guest.</p>{{/identities}}
        <h2>Second factors</h2>
        {{#hasFactors}}<table><thead><tr><th>Type</th><th>Name</th><th>State</th><th>Added</th><th>Last used</th></tr></thead><tbody>
        {{#factors}}<tr><td>{{type}}</td><td>{{name}}</td><td>{{state}}</td><td>{{created}}</td><td>{{lastUsed}}</td></tr>{{/factors}}
        </tbody></table><p>Recovery codes left: {{recoveryCodesLeft}}.</p>{{/hasFactors}}
        {{^factors}}<p>None.</p>{{/factors}}
        <h2>Sessions</h2>
        {{#hasSessions}}<table><thead><tr><th>Session</th><th>Signed in with</th><th>Started</th><th>Last refreshed</th><th>Expires</th><th>Client</th><th></th></tr></thead><tbody>
        {{#sessions}}<tr><td><code>{{id}}</code></td><td>{{method}}</td><td>{{created}}</td><td>{{refreshed}}</td><td>{{expires}}</td><td>{{client}}</td>
        <td><form method="post" action="{{end}}"><input type="hidden" name="csrf" value="{{formToken}}"><button type="submit">End</button></form></td></tr>
        {{/sessions}}</tbody></table>{{/hasSessions}}
        {{^sessions}}<p>No active session.</p>{{/sessions}}
        <h2>Properties</h2>
        <form method="post" action="{{base}}/properties" class="card">
        <input type="hidden" name="csrf" value="{{formToken}}"><input type="hidden" name="version" value="{{propertiesVersion}}">
        <label for="properties">A JSON object: a member left out is removed, a member added is written.</label>
        <textarea id="properties" name="properties" rows="8" spellcheck="false">{{properties}}</textarea>
        <button type="submit">Save properties</button></form>
        <h2>Merges</h2>
        {{#hasMerges}}<ul>{{#merges}}<li>{{at}}: {{detail}}</li>{{/merges}}</ul>{{/hasMerges}}
        {{^merges}}<p>None in the recent history.</p>{{/merges}}
        <h2>History</h2>
        <table><thead><tr><th>When (UTC)</th><th>Event</th><th>Detail</th><th>Node</th><th>Client</th></tr></thead><tbody>
        {{#events}}<tr><td>{{at}}</td><td><code>{{type}}</code></td><td class="detail">{{detail}}</td><td>{{node}}</td><td>{{client}}</td></tr>{{/events}}
        </tbody></table>
        """

    static let deletions = """
        {{#done}}<p class="ok" role="status">{{done}}</p>{{/done}}
        <p class="filters">{{#filters}}<a href="/admin/deletions?status={{value}}"{{#current}} aria-current="page"{{/current}}>{{label}}</a> {{/filters}}</p>
        {{#hasRequests}}<table><thead><tr><th>Request</th><th>Status</th><th>Provider</th><th>Subject</th><th>User</th><th>Policy</th><th>Received</th><th>Last change</th><th></th></tr></thead><tbody>
        {{#requests}}<tr><td><code>{{id}}</code></td><td>{{status}}</td><td>{{provider}}</td><td><code>{{subject}}</code></td>
        <td>{{#userLink}}<a href="{{userLink}}"><code>{{userID}}</code></a>{{/userLink}}</td><td>{{policy}}</td><td>{{created}}</td><td>{{updated}}</td>
        <td>{{#pending}}<form method="post" action="{{approve}}"><input type="hidden" name="csrf" value="{{formToken}}"><button type="submit">Approve</button></form>
        <form method="post" action="{{refuse}}" class="refuse"><input type="hidden" name="csrf" value="{{formToken}}">
        <input type="text" name="reason" required maxlength="500" aria-label="Reason" placeholder="Reason the person reads">
        <button type="submit">Refuse</button></form>{{/pending}}{{#reason}}{{reason}}{{/reason}}</td></tr>
        {{/requests}}</tbody></table>{{/hasRequests}}
        {{^requests}}<p>No request.</p>{{/requests}}
        """

    static let keys = """
        {{#done}}<p class="ok" role="status">{{done}}</p>{{/done}}
        <table><thead><tr><th>Key id</th><th>State</th><th>Created (UTC)</th><th>Retired (UTC)</th></tr></thead><tbody>
        {{#keys}}<tr><td><code>{{kid}}</code></td><td>{{role}}</td><td>{{created}}</td><td>{{retired}}</td></tr>{{/keys}}
        </tbody></table>
        <form method="post" action="/admin/keys/rotate" class="card"><input type="hidden" name="csrf" value="{{formToken}}">
        <p class="hint">A new key is published by every node at its next key refresh and signs once it is old enough
        (<code>LATCHKEY_KEY_ACTIVATION_DELAY</code>).</p><button type="submit">Rotate</button></form>
        """

    static let adminKeys = """
        {{#done}}<p class="ok" role="status">{{done}}</p>{{/done}}
        <p class="hint">Keys are made on the server only: <code>latchkey admin keys create --name NAME</code>.
        Revoking a key ends its console sessions at once.</p>
        <table><thead><tr><th>Key id</th><th>Name</th><th>Created (UTC)</th><th>Last used</th><th>Revoked</th><th></th></tr></thead><tbody>
        {{#keys}}<tr><td><code>{{id}}</code>{{#current}} <span class="tag">you</span>{{/current}}</td><td>{{name}}</td><td>{{created}}</td><td>{{lastUsed}}</td><td>{{revoked}}</td>
        <td>{{#active}}<form method="post" action="{{revoke}}"><input type="hidden" name="csrf" value="{{formToken}}"><button type="submit">Revoke</button></form>{{/active}}</td></tr>
        {{/keys}}</tbody></table>
        """
}
