// Azure Cosmos DB for Tally: the account, the database, the bucket container (container.json, which Tally's own
// container definition generates: docs/azure.md) and the data-plane role of the identity the apps run as.
//
//   az deployment group create -g RG -f deploy/azure/cosmos.bicep \
//     -p accountName=ACCOUNT principalId=$(az identity show -g RG -n tally-id --query principalId -o tsv)

@description('Cosmos DB account name: globally unique, lower case, 3-44 characters.')
param accountName string

param location string = resourceGroup().location
param databaseName string = 'tally'
param containerName string = 'buckets'

@description('Throughput of the container: manual (ruPerSecond), autoscale (ruPerSecond is the maximum) or none (no throughput of its own).')
@allowed(['manual', 'autoscale', 'none'])
param throughputMode string = 'autoscale'

@description('manual: RU/s (>= 400, a multiple of 100); autoscale: maximum RU/s (>= 1000, a multiple of 1000). docs/scaling.md sizes it.')
param ruPerSecond int = 10000

@description('Object (principal) id of the identity the apps authenticate as: the managed identity behind workload identity, or a service principal.')
param principalId string

@description('Refuse account keys: every client must use Entra ID (Tally with cosmos.auth other than key).')
param disableLocalAuth bool = true

resource account 'Microsoft.DocumentDB/databaseAccounts@2024-05-15' = {
  name: accountName
  location: location
  kind: 'GlobalDocumentDB'
  properties: {
    databaseAccountOfferType: 'Standard'
    locations: [
      { locationName: location, failoverPriority: 0, isZoneRedundant: false }
    ]
    consistencyPolicy: { defaultConsistencyLevel: 'Session' }
    disableLocalAuth: disableLocalAuth
  }
}

resource database 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases@2024-05-15' = {
  parent: account
  name: databaseName
  properties: {
    resource: { id: databaseName }
  }
}

var throughputOptions = throughputMode == 'manual'
  ? { throughput: ruPerSecond }
  : throughputMode == 'autoscale' ? { autoscaleSettings: { maxThroughput: ruPerSecond } } : {}

resource buckets 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@2024-05-15' = {
  parent: database
  name: containerName
  properties: {
    // Partition key /pk, defaultTtl -1 (TTL on, each document's own ttl) and the indexing policy of CosmosClients.
    resource: union(loadJsonContent('container.json'), { id: containerName })
    options: throughputOptions
  }
}

// Lease items of the sinks' shared RU budget (sink.ru-budget.fleet-control-container): partition key /groupId, TTL on.
resource throughputControl 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@2024-05-15' = {
  parent: database
  name: 'tally-throughput-control'
  properties: {
    resource: {
      id: 'tally-throughput-control'
      partitionKey: { paths: ['/groupId'], kind: 'Hash' }
      defaultTtl: -1
    }
    options: { throughput: 400 }
  }
}

// Cosmos DB Built-in Data Contributor (its fixed id): items and metadata reads on the data plane, nothing on the
// control plane. Scoped to the account; narrow it to '${account.id}/dbs/${databaseName}' if the account is shared.
resource dataContributor 'Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments@2024-05-15' = {
  parent: account
  name: guid(account.id, principalId, '00000000-0000-0000-0000-000000000002')
  properties: {
    roleDefinitionId: '${account.id}/sqlRoleDefinitions/00000000-0000-0000-0000-000000000002'
    principalId: principalId
    scope: account.id
  }
}

output endpoint string = account.properties.documentEndpoint
