"""The program of test_sql_filesystem.py's rolling policy: run with argument "pyflink"
(PyFlink 2.3.0) or "api" (this project); the same code after the imports. A filesystem sink
with 'sink.rolling-policy.file-size' rolls its part file once it is larger than that; the
files, in the order they were written, and what a bad size or duration fails with."""
import os
import re
import shutil
import sys
import tempfile

if sys.argv[1] == "pyflink":
    from pyflink.datastream import StreamExecutionEnvironment
    from pyflink.table import StreamTableEnvironment
else:
    from api.datastream import StreamExecutionEnvironment
    from api.table import StreamTableEnvironment

base = tempfile.mkdtemp()
env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
t_env = StreamTableEnvironment.create(env)
t_env.get_config().set("parallelism.default", "1")


def create(name, *options):
    t_env.execute_sql(f"CREATE TABLE {name} (id INT, name STRING) WITH ("
                      f"'connector' = 'filesystem', 'path' = '{base}/{name}', "
                      f"'format' = 'json'" + ''.join(", '%s' = '%s'" % o for o in options) + ")")


create('rolled', ('sink.rolling-policy.file-size', '60b'),
       ('sink.rolling-policy.rollover-interval', '30 min'),
       ('sink.rolling-policy.check-interval', '1 min'),
       ('sink.rolling-policy.inactivity-interval', '10 s'))
create('unrolled', ('sink.rolling-policy.file-size', '128MB'))
for name in ('rolled', 'unrolled'):
    t_env.execute_sql(f"INSERT INTO {name} VALUES (1, 'alice'), (2, 'bob'), (3, 'carol'), "
                      "(4, 'dave'), (5, 'eve')").wait()
    files = sorted(os.listdir(f'{base}/{name}'), key=lambda f: int(re.findall(r'\d+', f)[-1]))
    print(name, len(files))
    for f in files:
        print(repr(open(f'{base}/{name}/{f}').read()))
for i, (key, value) in enumerate((('sink.rolling-policy.file-size', '12 parsecs'),
                                  ('sink.rolling-policy.rollover-interval', 'soon'))):
    try:
        create(f'bad{i}', (key, value))
        t_env.execute_sql(f"INSERT INTO bad{i} VALUES (1, 'a')").wait()
        print('bad: no error')
    except Exception as e:
        print('bad:', f"Could not parse value '{value}' for key '{key}'" in str(e))
shutil.rmtree(base)
