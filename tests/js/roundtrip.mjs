// Basic round trip with the JavaScript neo4j-driver; prints one JSON line.
import neo4j from 'neo4j-driver'

const [uri, user, password] = process.argv.slice(2)
const out = {}
for (const scheme of ['bolt', 'neo4j']) {
  const driver = neo4j.driver(uri.replace('bolt://', scheme + '://'), neo4j.auth.basic(user, password))
  const info = await driver.getServerInfo()
  const { records, keys } = await driver.executeQuery('RETURN 1 AS one, "ü" AS s')
  out[scheme] = { agent: info.agent, protocol: info.protocolVersion, keys, one: records[0].get('one').toNumber(), s: records[0].get('s') }
  await driver.close()
}
const driver = neo4j.driver(uri, neo4j.auth.basic(user, password))
const session = driver.session()
try {
  await session.run('MATCH (n:JS) DETACH DELETE n')
  const tx = session.beginTransaction()
  await tx.run('CREATE (:JS {v: 1})-[:R]->(:JS {v: 2})')
  await tx.commit()
  const tx2 = session.beginTransaction()
  await tx2.run('CREATE (:JS {v: 99})')
  await tx2.rollback()
  const res = await session.run('MATCH p=(a:JS)-[r:R]->(b:JS) RETURN a, r, p, date("2024-02-29") AS d')
  const rec = res.records[0]
  out.node = { labels: rec.get('a').labels, v: rec.get('a').properties.v.toNumber() }
  out.rel = rec.get('r').type
  out.pathLength = rec.get('p').length
  out.date = rec.get('d').toString()
  const count = await session.run('MATCH (n:JS) RETURN count(n) AS c')
  out.count = count.records[0].get('c').toNumber()
  try {
    await session.run('MATCH (n RETURN n')
  } catch (e) {
    out.error = e.code
  }
  const summary = await session.run('MATCH (n:JS) DETACH DELETE n')
  out.deleted = summary.summary.counters.updates().nodesDeleted
} finally {
  await session.close()
  await driver.close()
}
console.log(JSON.stringify(out))
