"""SQL and chained Table API calls over an upsert-kafka table (a real Kafka-protocol
broker, Tansu): projections, filters and GROUP BYs consume its changelog as Flink's do
(the filter and columns of a query taken into the upsert normalization, a GROUP BY
retracting -U/-D rows), printing what PyFlink 2.3.0 printed for the same upserts
(``upsert_changelog_oracle.py``)."""
import json
import os
from collections import Counter

from benchmarks.kafka_broker import create_topic, produce, read_messages, unique_topic
from tests.api.table.streams import streaming_t_env
from api.table.expressions import col
from tests.api.table.upsert_changelog_queries import QUERIES, UPSERTS, table_queries

HERE = os.path.dirname(__file__)

with open(os.path.join(HERE, "upsert_changelog_pyflink_2_3_0.txt")) as f:
    PYFLINK_2_3_0_OUTPUT = f.read()


def _upsert_table(kafka_broker, partitions: int = 1, parallelism: int = 1):
    """A STREAMING table environment with the table t of UPSERTS (id STRING, g STRING,
    v INT, key id) on a new topic."""
    bootstrap = kafka_broker.bootstrap
    topic = create_topic(bootstrap, unique_topic('upserts'), partitions)
    produce(bootstrap, topic, [None if g is None else json.dumps({'id': i, 'g': g, 'v': v})
                               for i, g, v in UPSERTS],
            keys=[json.dumps({'id': i}).encode() for i, _, _ in UPSERTS])
    t_env = streaming_t_env(parallelism=parallelism)
    t_env.get_config().set("parallelism.default", str(parallelism))
    t_env.execute_sql(
        "CREATE TABLE t (id STRING, g STRING, v INT, PRIMARY KEY (id) NOT ENFORCED) "
        f"WITH ('connector' = 'upsert-kafka', 'topic' = '{topic}', "
        f"'properties.bootstrap.servers' = '{bootstrap}', 'key.format' = 'json', "
        "'value.format' = 'json', 'scan.bounded.mode' = 'latest-offset')")
    return t_env


def _print_all(t_env) -> None:
    for query in QUERIES:
        print(query)
        t_env.sql_query(query).execute().print()
    for label, query in table_queries(t_env.from_path('t'), col):
        print(label)
        query.execute().print()


def test_queries_of_an_upsert_table_consume_its_changelog_as_pyflink(
        spark, kafka_broker, capsys):
    t_env = _upsert_table(kafka_broker)
    capsys.readouterr()
    _print_all(t_env)
    assert capsys.readouterr().out == PYFLINK_2_3_0_OUTPUT


def _changelogs(printed: str) -> dict:
    """Per query printed (its label, then its tableau), its (kind, values) rows."""
    changelogs, label = {}, None
    for line in printed.splitlines():
        if line.startswith('| ') and not line.startswith('| op '):
            kind, *values = [v.strip() for v in line.strip('|').split('|')]
            changelogs[label].append((kind, tuple(values)))
        elif not line.startswith(('+', '| op ')) and \
                not line.endswith(('rows in set', 'Empty set')):
            label = line
            changelogs[label] = []
    return changelogs


def _final_rows(printed: str) -> dict:
    """Per query printed, the rows its changelog leaves."""
    final = {}
    for label, changes in _changelogs(printed).items():
        rows = final[label] = Counter()
        for kind, values in changes:
            rows[values] += -1 if kind in ('-U', '-D') else 1
    return {label: +rows for label, rows in final.items()}


def test_queries_of_an_upsert_table_end_as_pyflinks_at_parallelism_2(
        spark, kafka_broker, capsys):
    t_env = _upsert_table(kafka_broker, partitions=2, parallelism=2)
    capsys.readouterr()
    _print_all(t_env)
    assert _final_rows(capsys.readouterr().out) == _final_rows(PYFLINK_2_3_0_OUTPUT)


def test_a_group_by_of_an_upsert_table_is_written_to_another_with_its_deletes(
        spark, kafka_broker):
    t_env = _upsert_table(kafka_broker)
    bootstrap = kafka_broker.bootstrap
    topic = create_topic(bootstrap, unique_topic('counts'))
    t_env.execute_sql(
        "CREATE TABLE counts (g STRING, n BIGINT, PRIMARY KEY (g) NOT ENFORCED) "
        f"WITH ('connector' = 'upsert-kafka', 'topic' = '{topic}', "
        f"'properties.bootstrap.servers' = '{bootstrap}', 'key.format' = 'json', "
        "'value.format' = 'json')")
    query = "SELECT g, COUNT(*) FROM t WHERE v > 2 GROUP BY g"
    t_env.execute_sql("INSERT INTO counts " + query).wait()
    messages = [(json.loads(m.key())['g'], m.value()) for m in read_messages(bootstrap, topic)]
    kinds = Counter(kind for kind, _ in _changelogs(PYFLINK_2_3_0_OUTPUT)[query])
    assert sum(value is None for _, value in messages) == kinds['-D'] > 0  # as tombstones
    assert len(messages) == kinds['+I'] + kinds['+U'] + kinds['-D']  # no -U
    last = {g: json.loads(value)['n'] for g, value in dict(messages).items() if value}
    assert {(g, str(n)) for g, n in last.items()} == set(
        _final_rows(PYFLINK_2_3_0_OUTPUT)[query])
