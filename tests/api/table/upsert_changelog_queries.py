"""The upserts (id, g, v) of test_upsert_changelog.py (``(id, None, None)``: a delete) and
the queries over them."""
UPSERTS = [('x', 'a', 1), ('y', 'a', 5), ('x', 'a', 3), ('x', 'b', 3), ('y', None, None),
           ('z', 'b', -1), ('x', 'a', 3), ('q', None, None), ('y', 'a', 2), ('z', 'b', 4)]
QUERIES = [
    "SELECT id, v * 2 AS w FROM t",
    "SELECT id, v % 2 AS p FROM t",
    "SELECT g FROM t",
    "SELECT id, g FROM t WHERE v > 2 AND g = 'a'",
    "SELECT g, SUM(v) AS s, COUNT(*) AS n, MIN(v) AS lo, MAX(v) AS hi, AVG(v) AS m "
    "FROM t GROUP BY g",
    "SELECT id, SUM(v) FROM t GROUP BY id",  # of the key: a Calc (Flink removes the GROUP BY)
    "SELECT id, g, MAX(v), MIN(DISTINCT v) FROM t GROUP BY id, g",
    "SELECT id, g, MAX(v), MIN(v), COUNT(*) FROM t GROUP BY id, g",  # kept: -D and +I
    "SELECT id, COUNT(*) FROM t GROUP BY id",  # only the key read: no change of x
    "SELECT id, SUM(v) FROM t GROUP BY id HAVING SUM(v) > 2",
    "SELECT id, AVG(v), COUNT(v) FROM t GROUP BY id",  # kept: -D and +I
    "SELECT g, COUNT(DISTINCT v) FROM t GROUP BY g",
    "SELECT g, COUNT(*) FROM t WHERE v > 2 GROUP BY g",
    "SELECT g, COUNT(*) AS c FROM t GROUP BY g HAVING COUNT(*) > 1",
]


def table_queries(t, col) -> list:
    """(label, table) of chained Table API calls of the table ``t`` (``col``: the
    expression DSL's)."""
    return [
        ("where(v > 2).select(id, g)", t.where(col('v') > 2).select(col('id'), col('g'))),
        ("select(id, g, v).where(g = 'a').select(id)",
         t.select(col('id'), col('g'), col('v')).where(col('g') == 'a').select(col('id'))),
        ("where(v > 0).group_by(g).select(g, v.sum, v.max)",
         t.where(col('v') > 0).group_by(col('g')).select(
             col('g'), col('v').sum.alias('s'), col('v').max.alias('hi'))),
        ("group_by(id, g).select(id, v.sum, g, v.min)",  # of the key: a Calc, as in SQL
         t.group_by(col('id'), col('g')).select(
             col('id'), col('v').sum.alias('s'), col('g'), col('v').min.alias('lo'))),
        ("group_by(id).select(id, v.avg)", t.group_by(col('id')).select(
            col('id'), col('v').avg.alias('m'))),
    ]
