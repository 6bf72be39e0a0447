"""The kafka and upsert-kafka SQL connectors against a real Kafka-protocol broker (Tansu,
see benchmarks/kafka_broker.py: it shows aborted transactions to read_committed readers,
and its high watermark lags inside a record batch, so records read with
'scan.bounded.mode' = 'latest-offset' are produced one batch each here)."""
import datetime
import json

import pytest

from api.common.types import RowKind
from benchmarks.kafka_broker import create_topic, produce, read_messages, unique_topic
from tests.api.table.streams import streaming_t_env


def _with(bootstrap, topic, *options):
    return ("WITH ('connector' = 'kafka', 'topic' = '%s', 'properties.bootstrap.servers' = "
            "'%s', 'properties.group.id' = 'g', 'scan.startup.mode' = 'earliest-offset', "
            "'scan.bounded.mode' = 'latest-offset'%s)"
            % (topic, bootstrap, ''.join(", '%s' = '%s'" % o for o in options)))


def test_a_kafka_table_is_read_and_written_with_key_and_value_formats(spark, kafka_broker):
    bootstrap = kafka_broker.bootstrap
    source, sink = (create_topic(bootstrap, unique_topic(p), 2) for p in ('in', 'out'))
    produce(bootstrap, source, ['%d;w%d;%d.5' % (i, i % 3, i) for i in range(12)] + ['bad'],
            partition=0)
    t_env = streaming_t_env()
    t_env.execute_sql("CREATE TABLE words (id INT, word STRING, score DOUBLE) "
                      + _with(bootstrap, source, ('format', 'csv'),
                              ('csv.field-delimiter', ';'), ('csv.ignore-parse-errors', 'true')))
    with t_env.execute_sql("SELECT * FROM words WHERE id IS NOT NULL").collect() as rows:
        assert sorted(tuple(r) for r in rows) == [(i, 'w%d' % (i % 3), i + .5)
                                                  for i in range(12)]
    t_env.execute_sql(
        "CREATE TABLE keyed (word STRING, id INT, score DOUBLE) " + _with(
            bootstrap, sink, ('key.format', 'raw'), ('key.fields', 'word'),
            ('value.format', 'json'), ('value.fields-include', 'EXCEPT_KEY'),
            ('sink.delivery-guarantee', 'exactly-once'),
            ('sink.transactional-id-prefix', 'keyed')))
    t_env.execute_sql("INSERT INTO keyed SELECT word, id, score FROM words").wait()
    messages = read_messages(bootstrap, sink)
    assert [json.loads(m.value()) for m in messages if m.key() is None] == [
        {'id': None, 'score': None}]  # the unreadable record: a row of nulls, as in Flink
    messages = [m for m in messages if m.key() is not None]
    assert sorted((m.key().decode(), json.loads(m.value())['id']) for m in messages) == \
        sorted(('w%d' % (i % 3), i) for i in range(12))
    assert all(json.loads(m.value()).keys() == {'id', 'score'} for m in messages)


def test_upsert_kafka_writes_a_changelog_as_upserts_and_tombstones(spark, kafka_broker):
    bootstrap = kafka_broker.bootstrap
    words, counts, copy = (create_topic(bootstrap, unique_topic(p)) for p in
                           ('words', 'counts', 'copy'))
    produce(bootstrap, words, ['a', 'b', 'a', 'c', 'a', 'b'])
    t_env = streaming_t_env()
    t_env.execute_sql("CREATE TABLE words (word STRING) " +
                      _with(bootstrap, words, ('format', 'raw')))

    def upsert(name, topic):
        t_env.execute_sql(
            f"CREATE TABLE {name} (word STRING, n BIGINT, PRIMARY KEY (word) NOT ENFORCED) "
            f"WITH ('connector' = 'upsert-kafka', 'topic' = '{topic}', "
            f"'properties.bootstrap.servers' = '{bootstrap}', 'key.format' = 'json', "
            f"'value.format' = 'json', 'scan.bounded.mode' = 'latest-offset')")
    upsert('counts', counts)
    upsert('copy', copy)
    t_env.execute_sql("INSERT INTO counts SELECT word, COUNT(*) AS n FROM words "
                      "GROUP BY word").wait()
    written = [(json.loads(m.key())['word'], json.loads(m.value())['n'])
               for m in read_messages(bootstrap, counts)]
    assert dict(written) == {'a': 3, 'b': 2, 'c': 1}  # -U rows are not written
    assert len(written) == 6
    produce(bootstrap, counts, [None], keys=[b'{"word":"c"}'])  # a tombstone deletes c
    produce(bootstrap, counts, ['{"word":"z","n":0}'], keys=[b'{"word":"z"}'])
    changelog = t_env.from_path('counts').execute().collect()
    kinds = [(r.get_row_kind(), tuple(r)) for r in changelog]
    assert (RowKind.DELETE, ('c', 1)) in kinds
    assert [k for k in kinds if k[1][0] == 'a'] == [
        (RowKind.INSERT, ('a', 1)), (RowKind.UPDATE_BEFORE, ('a', 1)),
        (RowKind.UPDATE_AFTER, ('a', 2)), (RowKind.UPDATE_BEFORE, ('a', 2)),
        (RowKind.UPDATE_AFTER, ('a', 3))]
    t_env.from_path('counts').execute_insert('copy').wait()
    copied = [(json.loads(m.key())['word'], m.value()) for m in read_messages(bootstrap, copy)]
    last = dict(copied)  # each key's last message (a key's messages share a partition)
    assert last['c'] is None  # the delete, as a tombstone
    assert json.loads(last['z']) == {'word': 'z', 'n': 0}


def test_kafka_options_fail_when_the_table_is_created(spark):
    t_env = streaming_t_env()
    with pytest.raises(ValueError, match="Either 'topic' or 'topic-pattern' must be set"):
        t_env.execute_sql("CREATE TABLE t (a STRING) WITH ('connector' = 'kafka', "
                          "'properties.bootstrap.servers' = 'x:1', 'format' = 'raw')")
    with pytest.raises(ValueError, match="Unsupported options: scan.nope"):
        t_env.execute_sql("CREATE TABLE t (a STRING) WITH ('connector' = 'kafka', "
                          "'topic' = 't', 'properties.bootstrap.servers' = 'x:1', "
                          "'format' = 'raw', 'scan.nope' = '1')")
    with pytest.raises(ValueError, match="sink.transactional-id-prefix must be specified"):
        t_env.execute_sql("CREATE TABLE t (a STRING) WITH ('connector' = 'kafka', "
                          "'topic' = 't', 'properties.bootstrap.servers' = 'x:1', "
                          "'format' = 'raw', 'sink.delivery-guarantee' = 'exactly-once')")
    with pytest.raises(ValueError, match="require to define a PRIMARY KEY"):
        t_env.execute_sql("CREATE TABLE t (a STRING) WITH ('connector' = 'upsert-kafka', "
                          "'topic' = 't', 'properties.bootstrap.servers' = 'x:1', "
                          "'key.format' = 'raw', 'value.format' = 'raw')")


def _pattern_with(bootstrap, pattern, *options):
    return ("WITH ('connector' = 'kafka', 'topic-pattern' = '%s', "
            "'properties.bootstrap.servers' = '%s', 'properties.group.id' = 'g', "
            "'scan.startup.mode' = 'earliest-offset', 'format' = 'raw'%s)"
            % (pattern, bootstrap, ''.join(", '%s' = '%s'" % o for o in options)))


def test_a_topic_pattern_reads_every_matching_topic_with_its_metadata(spark, kafka_broker):
    # Flink's documented behaviour (PyFlink 2.3.0 here has no Kafka connector to compare)
    bootstrap = kafka_broker.bootstrap
    prefix = unique_topic('pattern')
    for suffix, partitions in (('a', 2), ('b', 1), ('other', 1)):
        create_topic(bootstrap, f'{prefix}-{suffix}', partitions)
    produce(bootstrap, f'{prefix}-a', ['a0', 'a1'], partition=1,
            timestamps=[1700000000123, 1700000000456],
            headers=[[('h', b'1'), ('k', b'x')], []])
    produce(bootstrap, f'{prefix}-b', ['b0'], timestamps=[1700000001000])
    produce(bootstrap, f'{prefix}-other', ['no'])
    t_env = streaming_t_env()
    t_env.execute_sql(
        "CREATE TABLE t (`topic` STRING METADATA VIRTUAL, word STRING, "
        "`partition` INT METADATA VIRTUAL, `offset` BIGINT METADATA VIRTUAL, "
        "ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp', "
        "kind STRING METADATA FROM 'timestamp-type' VIRTUAL, "
        "headers MAP<STRING, BYTES> METADATA) "
        + _pattern_with(bootstrap, f'{prefix}-(a|b)', ('scan.bounded.mode', 'latest-offset')))
    with t_env.execute_sql("SELECT * FROM t").collect() as rows:
        got = sorted(tuple(r) for r in rows)
    stamp = datetime.datetime.fromtimestamp
    assert got == [
        (f'{prefix}-a', 'a0', 1, 0, stamp(1700000000.123), 'CreateTime',
         {'h': b'1', 'k': b'x'}),
        (f'{prefix}-a', 'a1', 1, 1, stamp(1700000000.456), 'CreateTime', {}),
        (f'{prefix}-b', 'b0', 0, 0, stamp(1700000001), 'CreateTime', {})]
    # a metadata column is a column of queries like any other
    with t_env.execute_sql("SELECT word, `offset` + 1 FROM t WHERE `partition` = 1 "
                           "AND `topic` LIKE '%-a'").collect() as rows:
        assert sorted(tuple(r) for r in rows) == [('a0', 1), ('a1', 2)]


def test_a_topic_pattern_discovers_topics_created_while_the_job_runs(spark, kafka_broker):
    bootstrap = kafka_broker.bootstrap
    prefix = unique_topic('discover')
    create_topic(bootstrap, f'{prefix}-1')
    produce(bootstrap, f'{prefix}-1', ['first'])
    t_env = streaming_t_env()
    t_env.execute_sql("CREATE TABLE t (word STRING, `topic` STRING METADATA VIRTUAL) "
                      + _pattern_with(bootstrap, f'{prefix}-[0-9]+',
                                      ('scan.topic-partition-discovery.interval', '1 s')))
    with t_env.execute_sql("SELECT word, `topic` FROM t").collect() as rows:
        assert tuple(next(rows)) == ('first', f'{prefix}-1')
        create_topic(bootstrap, f'{prefix}-2')
        produce(bootstrap, f'{prefix}-2', ['second'])
        assert tuple(next(rows)) == ('second', f'{prefix}-2')


def test_topic_and_metadata_options_fail_when_the_table_is_created(spark, kafka_broker):
    bootstrap = kafka_broker.bootstrap
    t_env = streaming_t_env()
    both = _with(bootstrap, 'x', ('format', 'raw'), ('topic-pattern', 'x.*'))
    neither = both.replace("'topic' = 'x', ", '').replace(", 'topic-pattern' = 'x.*'", '')
    for options, message in (
            (both, "Option 'topic' and 'topic-pattern' shouldn't be set together"),
            (neither, "Either 'topic' or 'topic-pattern' must be set"),
            (_pattern_with(bootstrap, 'x(', ), "Invalid 'topic-pattern' 'x\\('"),
            (_pattern_with(bootstrap, 'x', ('scan.topic-partition-discovery.interval', 'often')),
             "'often' for key 'scan.topic-partition-discovery.interval'")):
        with pytest.raises(ValueError, match=message):
            t_env.execute_sql("CREATE TABLE t (w STRING) " + options)
    with pytest.raises(ValueError, match=r"Invalid metadata key 'size' in column 'n' of table "
                                         r"'default_catalog.default_database.t'. The 'kafka' "
                                         r"connector supports .*: topic, partition"):
        t_env.execute_sql("CREATE TABLE t (w STRING, n INT METADATA FROM 'size') "
                          + _pattern_with(bootstrap, 'x'))
    with pytest.raises(ValueError, match="metadata column 'o': Kafka's 'offset' is BIGINT"):
        t_env.execute_sql("CREATE TABLE t (w STRING, o STRING METADATA FROM 'offset') "
                          + _pattern_with(bootstrap, 'x'))
    with pytest.raises(ValueError, match="Invalid metadata key 'offset' .* 'datagen' "
                                         r"connector supports .*: \(none\)"):
        t_env.execute_sql("CREATE TABLE t (w STRING, `offset` BIGINT METADATA) WITH "
                          "('connector' = 'datagen')")


def test_inserts_write_the_timestamp_and_headers_metadata(spark, kafka_broker):
    bootstrap = kafka_broker.bootstrap
    source, at_least_once, exactly_once = (create_topic(bootstrap, unique_topic(p))
                                           for p in ('meta-in', 'meta-a', 'meta-e'))
    produce(bootstrap, source, ['a', 'b'], timestamps=[1700000000123, 1700000000456],
            headers=[[('h', b'1')], []])
    t_env = streaming_t_env()
    columns = ("(word STRING, ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp', "
               "headers MAP<STRING, BYTES> METADATA, `offset` BIGINT METADATA VIRTUAL) ")
    t_env.execute_sql("CREATE TABLE src " + columns + _with(bootstrap, source, ('format', 'raw')))
    for name, guarantee, topic in (('out_a', 'at-least-once', at_least_once),
                                   ('out_e', 'exactly-once', exactly_once)):
        t_env.execute_sql(f"CREATE TABLE {name} " + columns + _with(
            bootstrap, topic, ('format', 'raw'), ('sink.delivery-guarantee', guarantee),
            ('sink.transactional-id-prefix', 'meta')))
        # the persisted columns are written: word, ts, headers (offset is virtual)
        t_env.execute_sql(f"INSERT INTO {name} SELECT UPPER(word), ts, headers "
                          "FROM src").wait()
        # (exactly once, the sink's own headers name each record's batch and sequence)
        assert sorted((m.value(), m.timestamp()[1], [h for h in m.headers() or []
                                                     if not h[0].startswith('sds.')])
                      for m in read_messages(bootstrap, topic)) == [
            (b'A', 1700000000123, [('h', b'1')]), (b'B', 1700000000456, [])]


def test_inserts_into_a_pattern_or_a_table_with_read_only_metadata_fail(spark, kafka_broker):
    bootstrap = kafka_broker.bootstrap
    t_env = streaming_t_env()
    t_env.execute_sql("CREATE TABLE pattern (w STRING) " + _pattern_with(bootstrap, 'x.*'))
    with pytest.raises(ValueError, match="only supports single topic, but got topic-pattern"):
        t_env.execute_sql("INSERT INTO pattern VALUES ('a')")
    t_env.execute_sql("CREATE TABLE offsets (w STRING, `offset` BIGINT METADATA) "
                      + _with(bootstrap, 'x', ('format', 'raw')))
    with pytest.raises(ValueError, match="Invalid metadata key 'offset' in column 'offset' .* "
                                         "for writing: headers, timestamp"):
        t_env.execute_sql("INSERT INTO offsets VALUES ('a', 1)")


def test_a_watermark_on_the_timestamp_metadata_drives_event_time_windows(spark, kafka_broker):
    bootstrap = kafka_broker.bootstrap
    topic = create_topic(bootstrap, unique_topic('windows'))
    base = 1700000000000
    produce(bootstrap, topic, ['a', 'b', 'a', 'a'],
            timestamps=[base + 100, base + 900, base + 1500, base + 2100])
    t_env = streaming_t_env(parallelism=1)
    t_env.execute_sql("CREATE TABLE clicks (word STRING, ts TIMESTAMP_LTZ(3) METADATA FROM "
                      "'timestamp', WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) "
                      + _with(bootstrap, topic, ('format', 'raw')))
    with t_env.execute_sql(
            "SELECT window_start, word, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE clicks, "
            "DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY window_start, window_end, "
            "word").collect() as rows:
        got = sorted(tuple(r) for r in rows)
    start = datetime.datetime.fromtimestamp(base // 1000)
    second = datetime.timedelta(seconds=1)
    assert got == [(start, 'a', 1), (start, 'b', 1), (start + second, 'a', 1),
                   (start + 2 * second, 'a', 1)]
