# The Java SDK (sdk/java): included by the top-level Makefile (needs GO from it).
# Maven runs on JDK 22+ (FFM is final there); the machines have Temurin 25,
# while the default `java` may be older, so JAVA_HOME is set for Maven here.

.PHONY: java java-test java-install

JDK        ?= $(or $(wildcard /usr/lib/jvm/temurin-25-jdk-amd64),$(JAVA_HOME))
MVN        ?= mvn
JAVA_MVN   := cd sdk/java && JAVA_HOME=$(JDK) $(MVN) -q -B -Dstyle.color=never
# Where the jar carries the library (a resource directory of the pom, gitignored).
JAVA_NATIVE := sdk/java/native/dev/webtensor/native/linux-x86_64

# `make capi` every time: Go's build cache makes it cheap when nothing changed,
# and a stale libwebtensor.so in the jar would be worse than a few seconds.
java: ## build the Java SDK jar (sdk/java/target/webtensor-0.1.0.jar), carrying libwebtensor.so
	$(MAKE) --no-print-directory capi
	mkdir -p $(JAVA_NATIVE)
	cp build/libwebtensor.so $(JAVA_NATIVE)/libwebtensor.so
	$(MAKE) --no-print-directory build/plugins/policy-kernel-variant.wasm
	cp build/plugins/policy-kernel-variant.wasm sdk/java/native/dev/webtensor/policy-kernel-variant.wasm
	$(MAKE) --no-print-directory build/plugins/policy-auto.wasm
	cp build/plugins/policy-auto.wasm sdk/java/native/dev/webtensor/policy-auto.wasm
	$(JAVA_MVN) package -DskipTests

java-test: java ## the Java SDK's JUnit tests (reference vectors, zero copy, errors, threads, leaks, training)
	$(JAVA_MVN) test

java-install: java ## install dev.webtensor:webtensor into the local Maven repository (~/.m2)
	$(JAVA_MVN) install -DskipTests
