# syntax=docker/dockerfile:1
#
# One image recipe for the three Tally applications, chosen with the MODULE build argument:
#
#   docker build -f docker/app.Dockerfile --build-arg MODULE=read-service -t tally/read-service:local .
#
# MODULE is ingest-app, read-service or loadgen. The build context is the repository root (see
# .dockerignore). docker-compose.yml builds all three from this file, and the demo image from its
# `demo` stage (MODULE=loadgen, --target demo).

ARG BUILD_IMAGE=maven:3.9.11-eclipse-temurin-17
ARG RUNTIME_IMAGE=eclipse-temurin:17-jre

# --- build: the same command a developer runs, limited to the module and what it depends on ---------
FROM ${BUILD_IMAGE} AS build
ARG MODULE
# The maven image sets MAVEN_CONFIG=/root/.m2 for its own entrypoint; some Maven Wrapper versions pass
# that variable to Maven as an argument ("Unknown lifecycle phase /root/.m2"). The wrapper downloads the
# project's Maven (3.9.11) and needs nothing from the image but the JDK, so clear it.
ENV MAVEN_CONFIG=
WORKDIR /src
COPY . .
RUN test -n "${MODULE}" && test -f "${MODULE}/pom.xml" \
    || { echo "build argument MODULE must name an application module (ingest-app, read-service, loadgen); got '${MODULE}'" >&2; exit 1; }
# The Maven repository and the wrapper's Maven download live in a BuildKit cache shared by the three
# builds; "locked" makes concurrent builds take turns instead of writing the same repository at once.
RUN --mount=type=cache,target=/root/.m2,sharing=locked \
    chmod +x mvnw && ./mvnw -q -B -DskipTests package -pl "${MODULE}" -am \
    && test -f "${MODULE}/target/${MODULE}.jar" && test -d "${MODULE}/target/lib"

# --- demo: loadgen plus local/demo.sh, which drives the running services (docker-compose.yml's demo
# --- service; build with MODULE=loadgen and target demo). Not the default target: that is the last stage.
FROM ${RUNTIME_IMAGE} AS demo
# The script needs bash, curl, awk, sed and grep; the JRE image lacks only curl.
RUN apt-get update && apt-get install -y --no-install-recommends curl && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 tally \
    && useradd --system --uid 10001 --gid tally --home-dir /opt/tally --no-create-home --shell /usr/sbin/nologin tally
WORKDIR /opt/tally
COPY --from=build /src/loadgen/target/lib/ /opt/tally/lib/
COPY --from=build /src/loadgen/target/loadgen.jar /opt/tally/loadgen.jar
COPY local/demo.sh /opt/tally/local/demo.sh
COPY local/lib/common.sh /opt/tally/local/lib/common.sh
COPY rules/default-rules.yaml /opt/tally/rules/default-rules.yaml
USER 10001:10001
# Arguments after the image name are demo.sh's (--metrics-url=..., --read-url=..., --show-read-url=...).
ENTRYPOINT ["bash", "/opt/tally/local/demo.sh", "--attach", "--loadgen-jar=/opt/tally/loadgen.jar"]
CMD []

# --- runtime: a JRE, the module's jar and its runtime class path, a non-root user ------------------
FROM ${RUNTIME_IMAGE}
ARG MODULE
LABEL org.opencontainers.image.title="tally-${MODULE}" \
      org.opencontainers.image.source="docker/app.Dockerfile"
RUN groupadd --system --gid 10001 tally \
    && useradd --system --uid 10001 --gid tally --home-dir /opt/tally --no-create-home --shell /usr/sbin/nologin tally
WORKDIR /opt/tally
# The jar's manifest carries Class-Path entries lib/<dependency>.jar, resolved next to the jar.
COPY --from=build /src/${MODULE}/target/lib/ /opt/tally/lib/
COPY --from=build /src/${MODULE}/target/${MODULE}.jar /opt/tally/${MODULE}.jar
ENV APP_JAR=/opt/tally/${MODULE}.jar \
    JAVA_OPTS="-XX:MaxRAMPercentage=75.0 -XX:+ExitOnOutOfMemoryError"
USER 10001:10001
# A shell only to expand JAVA_OPTS; exec makes java PID 1, so it receives SIGTERM from `docker stop`
# and shuts down cleanly. Arguments after the image name become application flags (--key=value).
ENTRYPOINT ["/bin/sh", "-c", "exec java $JAVA_OPTS -jar \"$APP_JAR\" \"$@\"", "tally"]
CMD []
