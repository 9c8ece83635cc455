// Reads an Upstate page with the `statuspage.io` npm client, as dashboards
// and chat bots built on it do: pointed at the page's URL (`/s/{slug}`),
// every read goes to the Statuspage v2 paths below it.
//
// usage: node statuspage_client.js NODE_MODULES PAGE_URL
// Prints {summary, status, components, incidents, unresolved, maintenances,
// upcoming} as JSON; exits non-zero when a read fails.
const [modules, pageUrl] = process.argv.slice(2);
const { Statuspage } = require(`${modules}/statuspage.io`);

const client = new Statuspage("upstate");
client.setApiUrl(pageUrl);
(async () => {
  const out = {
    summary: await client.api.getSummary(),
    status: await client.api.getStatus(),
    components: await client.api.getComponents(),
    incidents: await client.api.incidents.getAll(),
    unresolved: await client.api.incidents.getUnresolved(),
    maintenances: await client.api.scheduledMaintenances.getAll(),
    upcoming: await client.api.scheduledMaintenances.getUpcoming(),
  };
  console.log(JSON.stringify(out));
})().catch((e) => {
  console.error(`statuspage.io client: ${e.message}`);
  process.exit(1);
});
