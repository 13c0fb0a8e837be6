'use strict';

// Answer to the SDK's query-plan request (header
// x-ms-cosmos-is-query-plan-request: True).
//
// The real gateway returns a PartitionedQueryExecutionInfo telling the SDK
// which client-side pipeline stages to run (merge-sort for ORDER BY,
// re-aggregation for aggregates, TOP/OFFSET/LIMIT/DISTINCT trimming) over the
// results of each physical partition, and which EPK ranges to query, and it
// rewrites the query into the per-partition form those stages expect.
//
// This endpoint has exactly one physical partition (one partition key range,
// "" to "FF"), so the server's own result is already the final result: we
// announce a plan without any client-side stage and the full range, and the
// SDK passes the original query through and returns our pages unchanged. That
// is also what the SDK does against a single-partition container in Azure.

const FULL_RANGE = Object.freeze({ min: '', max: 'FF', isMinInclusive: true, isMaxInclusive: false });

function buildQueryPlan({ selectValue }) {
  return {
    partitionedQueryExecutionInfoVersion: 2,
    queryInfo: {
      distinctType: 'None',
      top: null,
      offset: null,
      limit: null,
      orderBy: [],
      orderByExpressions: [],
      groupByExpressions: [],
      groupByAliases: [],
      aggregates: [],
      groupByAliasToAggregateType: {},
      rewrittenQuery: '',
      hasSelectValue: Boolean(selectValue),
      dCountInfo: null,
      hasNonStreamingOrderBy: false,
    },
    queryRanges: [{ ...FULL_RANGE }],
  };
}

module.exports = { buildQueryPlan, FULL_RANGE };
